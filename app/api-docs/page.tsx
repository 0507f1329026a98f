/**
 * /api-docs: the API reference, rendered on the server from the same OpenAPI document as GET /api/v1/openapi.json.
 * Public, like the document. Plain links and <details>: every part is reachable with the keyboard.
 */
import type { Metadata } from 'next';
import { ColumnHeads } from '@/app/_components/data-table';
import { openApiDocument, type Operation, type Parameter } from '@/lib/http/openapi';
import { ROUTES } from '@/lib/http/route-table';
import styles from './api-docs.module.css';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'API reference' };

type Entry = { method: string; path: string; op: Operation };

const ROLE_TEXT: Record<string, string> = {
  anonymous: 'public',
  viewer: 'viewer and above',
  auditor: 'auditor and above',
  operator: 'operator and above',
  admin: 'admin',
};

function typeOf(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ');
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return (schema.type as string[]).join(' | ');
  const branches = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  if (branches) return branches.map(typeOf).join(' | ');
  return 'any';
}

function Parameters({ params }: { params: Parameter[] }) {
  return (
    <div className={styles.tableWrap}>
      <table className={styles.table}>
        <caption className="visually-hidden">Parameters</caption>
        <ColumnHeads labels={['Name', 'In', 'Type', 'Required']} />
        <tbody>
          {params.map((p) => (
            <tr key={`${p.in}:${p.name}`}>
              <td>
                <code>{p.name}</code>
                {p.description ? <div className={styles.hint}>{p.description}</div> : null}
              </td>
              <td>{p.in}</td>
              <td>
                <code className={styles.type}>{typeOf(p.schema)}</code>
              </td>
              <td>{p.required ? 'yes' : 'no'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default async function ApiDocsPage() {
  const doc = await openApiDocument(ROUTES);
  const entries: Entry[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Operation })),
  );
  const tags = doc.tags.map((t) => t.name);
  const byTag = (tag: string) => entries.filter((e) => e.op.tags[0] === tag);
  return (
    <div className={styles.page}>
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className={styles.head}>
        <div className={styles.brand}>
          <span aria-hidden="true">◆</span> Swarm Permissions
        </div>
        <nav aria-label="Elsewhere" className={styles.headLinks}>
          <a href="/denials">Console</a>
          <a href="/api/v1/openapi.json">OpenAPI document (JSON)</a>
        </nav>
      </header>
      <div className={styles.body}>
        <nav aria-label="Operations" className={styles.toc}>
          <h2 className={styles.tocTitle}>Operations</h2>
          {tags.map((tag) => (
            <div key={tag} className={styles.tocGroup}>
              <h3 className={styles.tocTag}>{tag}</h3>
              <ul>
                {byTag(tag).map((e) => (
                  <li key={e.op.operationId}>
                    <a href={`#${e.op.operationId}`}>
                      <span className={styles.tocMethod}>{e.method}</span>{' '}
                      <span>{e.path}</span>
                    </a>
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </nav>
        <main id="main" className={styles.main} tabIndex={-1}>
          <h1>API reference</h1>
          <p className={styles.lead}>{doc.info.description}</p>
          <p className={styles.lead}>
            Authenticate with <code>Authorization: Bearer TOKEN</code> (<code>npx swarm users add NAME --role ROLE</code> prints one) or the console
            session. Each operation names the lowest role it admits; a refusal is answered 401 or 403 with the <code>rule_source</code> and the{' '}
            <code>decision_id</code> of its recorded denial. Errors have one shape: <code>{'{ "error": { "code", "message", … } }'}</code>.
          </p>
          {tags.map((tag) => (
            <section key={tag} aria-labelledby={`tag-${tag}`} className={styles.group}>
              <h2 id={`tag-${tag}`}>{tag}</h2>
              {byTag(tag).map((e) => (
                <article key={e.op.operationId} id={e.op.operationId} className={styles.op} aria-labelledby={`${e.op.operationId}-title`}>
                  <h3 id={`${e.op.operationId}-title`} className={styles.opTitle}>
                    <span className={`${styles.method} ${styles[`m${e.method}`] ?? ''}`}>{e.method}</span> <code className={styles.path}>{e.path}</code>
                  </h3>
                  <p className={styles.summary}>{e.op.summary}</p>
                  {e.op.description ? <p className={styles.hint}>{e.op.description}</p> : null}
                  <dl className={styles.facts}>
                    <dt>Role</dt>
                    <dd>{ROLE_TEXT[e.op['x-required-role']] ?? e.op['x-required-role']}</dd>
                  </dl>
                  {e.op.parameters?.length ? (
                    <>
                      <h4 className={styles.sub}>Parameters</h4>
                      <Parameters params={e.op.parameters} />
                    </>
                  ) : null}
                  {e.op.requestBody ? (
                    <>
                      <h4 className={styles.sub}>Request body</h4>
                      <details className={styles.schema}>
                        <summary>application/json schema</summary>
                        <pre className={styles.pre} tabIndex={0}>
                          {JSON.stringify(e.op.requestBody.content['application/json']?.schema, null, 2)}
                        </pre>
                      </details>
                    </>
                  ) : null}
                  <h4 className={styles.sub}>Responses</h4>
                  <ul className={styles.responses}>
                    {Object.entries(e.op.responses).map(([status, r]) => (
                      <li key={status}>
                        <span className={styles.status}>{status}</span> {r.description}
                      </li>
                    ))}
                  </ul>
                </article>
              ))}
            </section>
          ))}
        </main>
      </div>
    </div>
  );
}
