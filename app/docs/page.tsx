import type { Metadata } from 'next';
import Link from 'next/link';
import { docPages } from './catalog';
import styles from './docs.module.css';

export const metadata: Metadata = { title: 'Documentation' };
export const dynamic = 'force-dynamic';

/** /docs: the product's documentation, public like the API reference, rendered from the repository's own files. */
export default function DocsIndex() {
  const pages = docPages();
  return (
    <main className={styles.page}>
      <p className={styles.back}>
        <Link href="/">← The console</Link> · <Link href="/api-docs">API reference</Link>
      </p>
      <h1>Documentation</h1>
      <p className="muted">The same pages as the repository&apos;s README.md and docs/ folder.</p>
      <ul className={styles.index} aria-label="Documentation pages">
        {pages.map((p) => (
          <li key={p.name}>
            <Link href={`/docs/${p.name}`}>{p.title}</Link> <span className="muted">{p.file}</span>
          </li>
        ))}
      </ul>
    </main>
  );
}
