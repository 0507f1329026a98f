import { Forbidden } from '@/app/_components/forbidden';
import { landingFor, PAGE_ROLES } from '@/app/_components/page-roles';
import { currentPrincipal, requestedPath } from '@/lib/http/page-auth';

/**
 * The console's refusal page, rendered with HTTP status 403 when a page calls forbidden() (lib/http/page-auth.ts,
 * after the refusal was recorded as a denial). It says which rule refused, and offers the page the role works on.
 */
export default async function ConsoleForbidden() {
  const { app, principal } = await currentPrincipal();
  const path = (await requestedPath('/')).split('?')[0] ?? '/';
  const page = Object.keys(PAGE_ROLES).find((p) => path === p || path.startsWith(`${p}/`));
  // The same engine decision the page made (check is pure: it records nothing a second time).
  const decision =
    principal && page ? await app.decisions.authorize({ kind: 'http', principal, method: 'GET', path: page, requiredRole: PAGE_ROLES[page]! }) : undefined;
  return (
    <>
      <Forbidden
        ruleSource={decision && decision.decision !== 'ALLOW' ? decision.ruleSource : 'rbac'}
        reason={decision && decision.decision !== 'ALLOW' ? decision.reason : 'Your role does not allow this page.'}
      />
      {principal ? (
        <p>
          <a href={landingFor(principal.role)}>Go to your start page</a>
        </p>
      ) : null}
    </>
  );
}
