'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { apiPost, asApiError, errorSentence } from '@/app/_lib/api-client';
import type { RuleFile } from '@/lib/change-control/files';
import { proposalSchema } from '@/lib/http/responses';
import { fileIssuesOf, issuePlace, type FileIssue } from './policy-words';
import styles from './policy.module.css';

/**
 * Propose a change (admins): why, and the new text of the files that change; a file not given stays as in force.
 * A file's new text is uploaded, or edited here from the text in force ("Edit here"). The texts are sent as JSON
 * (POST /api/v1/policy/proposals); the server compiles them, runs the policy tests and replays the recorded calls. A
 * refusal lists every problem at its file:line:column; a proposal made opens its page. `names`: the files a proposal
 * may carry, by the key the API names each by; `inForce`: their texts in force (null: absent).
 */
export function ProposeForm({ names, inForce }: { names: Readonly<Record<RuleFile, string>>; inForce: Readonly<Record<RuleFile, string | null>> }) {
  const inputs = (Object.keys(names) as RuleFile[]).map((key) => ({ key, name: names[key] }));
  const router = useRouter();
  const [files, setFiles] = useState<Partial<Record<RuleFile | 'tests', File>>>({});
  /** the files the change removes (sent as null: the configuration then has no such file) */
  const [removed, setRemoved] = useState<Partial<Record<RuleFile, boolean>>>({});
  /** the files edited here: their text as it stands in the editor (a file edited back to the text in force is no change) */
  const [edited, setEdited] = useState<Partial<Record<RuleFile, string>>>({});
  const changedHere = (key: RuleFile) => edited[key] !== undefined && edited[key] !== (inForce[key] ?? '');
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<{ text: string; issues: FileIssue[] } | undefined>();

  const submit = async () => {
    const why = message.trim();
    const chosen = inputs.filter((f) => files[f.key] && !removed[f.key] && edited[f.key] === undefined);
    const editing = inputs.filter((f) => changedHere(f.key) && !removed[f.key]);
    const removing = inputs.filter((f) => removed[f.key]);
    if (!why || chosen.length + editing.length + removing.length === 0) {
      setError({ text: !why ? 'Say why the change is made: the approvers read it first.' : 'Choose at least one rule file to change or remove.', issues: [] });
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const texts: Partial<Record<RuleFile, string | null>> = {};
      for (const f of chosen) texts[f.key] = await files[f.key]!.text();
      for (const f of editing) texts[f.key] = edited[f.key]!;
      for (const f of removing) texts[f.key] = null;
      const tests = files.tests ? await files.tests.text() : undefined;
      const made = await apiPost('/api/v1/policy/proposals', { message: why, files: texts, ...(tests === undefined ? {} : { tests }) }, proposalSchema);
      router.push(`/policy/${made.id}`);
    } catch (e) {
      const err = asApiError(e);
      // The compiler's headline is the message's first line; its problems are listed one a line below it.
      setError({ text: errorSentence(err).split('\n')[0]!, issues: fileIssuesOf(err.details) });
      setBusy(false);
    }
  };

  return (
    <form
      className={styles.propose}
      aria-labelledby="propose-head"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label htmlFor="propose-message" className={styles.fieldLabel}>
        Why this change (required)
      </label>
      <textarea id="propose-message" rows={2} value={message} onChange={(e) => setMessage(e.target.value)} aria-describedby="propose-message-help" />
      <p id="propose-message-help" className={styles.fieldHelp}>
        Shown to the approvers and kept in the audit trail.
      </p>
      <fieldset className={styles.fileInputs}>
        <legend>New versions of the files that change, or a file to remove (the others stay as in force)</legend>
        {inputs.map((f) => (
          <div key={f.key} className={styles.fileInput}>
            <label htmlFor={`propose-file-${f.key}`}>
              <code>{f.name}</code>
            </label>
            <span className={styles.fileChoice}>
              <input
                id={`propose-file-${f.key}`}
                type="file"
                accept=".yaml,.yml,text/yaml,text/plain"
                disabled={removed[f.key] === true}
                onChange={(e) => setFiles((s) => ({ ...s, [f.key]: e.target.files?.[0] }))}
              />
              <label className={styles.removeFile}>
                <input type="checkbox" checked={removed[f.key] === true} onChange={(e) => setRemoved((r) => ({ ...r, [f.key]: e.target.checked }))} /> remove
                <span className="visually-hidden"> {f.name}</span>
              </label>
              <button
                type="button"
                className="button button-quiet"
                aria-expanded={edited[f.key] !== undefined}
                aria-controls={`propose-edit-${f.key}`}
                disabled={removed[f.key] === true}
                onClick={() =>
                  setEdited((ed) => {
                    const next = { ...ed };
                    if (next[f.key] === undefined) next[f.key] = inForce[f.key] ?? '';
                    else delete next[f.key];
                    return next;
                  })
                }
              >
                {edited[f.key] === undefined ? 'Edit here' : 'Stop editing'}
                <span className="visually-hidden"> {f.name}</span>
              </button>
            </span>
            {edited[f.key] !== undefined ? (
              <div className={styles.editor}>
                <label htmlFor={`propose-edit-${f.key}`} className="visually-hidden">
                  New text of {f.name}
                </label>
                <textarea
                  id={`propose-edit-${f.key}`}
                  className={styles.editorText}
                  rows={14}
                  spellCheck={false}
                  value={edited[f.key]}
                  onChange={(e) => setEdited((ed) => ({ ...ed, [f.key]: e.target.value }))}
                />
                <p className={styles.fieldHelp}>{changedHere(f.key) ? 'Changed: this text is proposed instead of the file in force (an upload of this file is ignored).' : 'Unchanged from the text in force.'}</p>
              </div>
            ) : null}
          </div>
        ))}
        <label className={styles.fileInput}>
          <span>
            <code>policy_tests.yaml</code> <span className="muted">(optional: run instead of the tests in force)</span>
          </span>
          <input type="file" accept=".yaml,.yml,text/yaml,text/plain" onChange={(e) => setFiles((s) => ({ ...s, tests: e.target.files?.[0] }))} />
        </label>
      </fieldset>
      {error ? (
        <div role="alert" className={styles.formError}>
          <p>{error.text}</p>
          {error.issues.length > 0 ? (
            <ul aria-label="Problems in the proposed files">
              {error.issues.map((i, n) => (
                <li key={n}>
                  <code>{issuePlace(i)}</code> {i.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
      <div className={styles.formActions}>
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? 'Measuring the impact…' : 'Propose this change'}
        </button>
        <span className="muted">Its tests run and its impact on the recorded calls is measured before anyone votes.</span>
      </div>
    </form>
  );
}
