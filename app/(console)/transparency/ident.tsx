import { Fragment } from 'react';

/**
 * An identifier (flag, tool, path) that may wrap after "_" or "/" when its column is narrow, and never inside a word:
 * a name broken mid-word reads as two names.
 */
export function Ident({ children, className }: { children: string; className?: string }) {
  const parts = children.split(/(?<=[_/])/);
  return (
    <code className={className}>
      {parts.map((p, i) => (
        <Fragment key={i}>
          {p}
          {i < parts.length - 1 ? <wbr /> : null}
        </Fragment>
      ))}
    </code>
  );
}
