/**
 * A path matched with the product's route table (lib/http/route-table.ts): which route it reaches, the methods it
 * allows (for a 405's Allow header) and the role its route declares. The matching itself is lib/http/route-matcher.ts.
 */
import { MATCHER } from './route-table';

export { declaredPrincipal, declaredRole, type RouteMatch } from './route-matcher';

export const { matchRoute, allowedMethods, listenerOnlyRole } = MATCHER;
