import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { docLinks, docPage } from '../catalog';
import { Markdown } from '../markdown';
import styles from '../docs.module.css';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ name: string }> };

export async function generateMetadata({ params }: Params): Promise<Metadata> {
  const page = docPage((await params).name);
  return { title: page ? page.title : 'Documentation' };
}

/** One page of the documentation (/docs/deployment: docs/deployment.md), rendered from its file. */
export default async function DocPageView({ params }: Params) {
  const page = docPage((await params).name);
  if (!page) notFound();
  return (
    <main className={styles.page}>
      <p className={styles.back}>
        <Link href="/docs">← Documentation</Link> · <Link href="/api-docs">API reference</Link> · <span className="muted">{page.file}</span>
      </p>
      <article className={styles.article}>
        <Markdown text={page.text} docs={docLinks()} />
      </article>
    </main>
  );
}
