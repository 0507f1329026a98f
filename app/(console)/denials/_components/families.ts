/** Rule-source families in the console: the vocabulary's (lib/audit/denials/vocabulary.ts) and the badges' class. */
import { ruleSourceFamily } from '@/lib/audit/denials/vocabulary';

export { FAMILY_ORDER, familyInfo, orderFamilies, ruleSourceFamily, type FamilyInfo } from '@/lib/audit/denials/vocabulary';

/** The class of the global badge colours (app/globals.css) for a rule source. */
export function badgeClass(ruleSource: string): string {
  return `badge badge-${ruleSourceFamily(ruleSource).replace(/[^a-z_]/g, '')}`;
}
