import type { ReactNode } from 'react';

interface Props {
  /** what to download; undefined while there is nothing to download yet: the same button, unavailable */
  href: string | undefined;
  className?: string;
  testId?: string;
  title?: string;
  children: ReactNode;
}

/** A plain link to a download (the browser saves the attachment), so it works with the keyboard and without script. */
export function DownloadLink({ href, className = 'button', testId, title, children }: Props) {
  if (href === undefined) {
    return (
      <button type="button" className={className} disabled>
        {children}
      </button>
    );
  }
  return (
    <a className={className} href={href} download data-testid={testId} title={title}>
      {children}
    </a>
  );
}
