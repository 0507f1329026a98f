'use client';

import styles from './transparency.module.css';

/** Opens the browser's print dialog; the print stylesheet leaves out navigation and controls. */
export function PrintButton() {
  return (
    <button type="button" className={`button ${styles.printButton}`} onClick={() => window.print()}>
      Print or save as PDF
    </button>
  );
}
