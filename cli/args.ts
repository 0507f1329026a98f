/** Argument parsing on node:util parseArgs, with parse failures turned into usage errors. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';
import type { CliContext } from './context';
import { UsageError } from './errors';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** Parse one command's options strictly (unknown options are usage errors); positionals are allowed. */
export function parseCommand<O extends OptionsConfig>(args: string[], options: O) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    if (isParseArgsError(error)) throw new UsageError(firstSentence(error.message));
    throw error;
  }
}

/** Options that each take a value, by name: `valueOptions('from', 'to')` is `{ from: { type: 'string' }, to: { type: 'string' } }`. */
export function valueOptions<const N extends string>(...names: N[]): Record<N, { type: 'string' }> {
  return Object.fromEntries(names.map((name) => [name, { type: 'string' }])) as Record<N, { type: 'string' }>;
}

/** Parse options only: a positional argument is a usage error. */
export function parseOptions<O extends OptionsConfig>(args: string[], options: O) {
  const { values, positionals } = parseCommand(args, options);
  expectPositionals(positionals, []);
  return values;
}

/**
 * Run the subcommand `sub` of `command` from its table, or refuse with the usage: an unknown one named, a missing one
 * with the list of them (in the table's order, then `after`).
 */
export function runSubcommand<R>(ctx: CliContext, command: string, sub: string | undefined, args: string[], table: Record<string, (ctx: CliContext, args: string[]) => R>, after = ''): R {
  if (sub !== undefined && Object.hasOwn(table, sub)) return table[sub]!(ctx, args);
  throw new UsageError(sub ? `unknown command "${command} ${sub}".` : `missing subcommand: swarm ${command} ${Object.keys(table).join('|')}${after}.`, [], true);
}

/** The given values of `keys`, named as a schema names them (--rule-source as rule_source), for validate(). */
export function givenValues(values: Readonly<Record<string, unknown>>, keys: readonly string[]): Record<string, string> {
  const given: Record<string, string> = {};
  for (const key of keys) {
    const value = values[key];
    if (typeof value === 'string') given[key.replace(/-/g, '_')] = value;
  }
  return given;
}

function isParseArgsError(error: unknown): error is Error & { code: string } {
  const code: unknown = error instanceof Error ? (error as Error & { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

/** The first sentence, plus the hint on the last line of a multi-line message (e.g. "use '--since=-XYZ'"). */
function firstSentence(text: string): string {
  const lines = text.split('\n');
  const first = lines[0] ?? text;
  const dot = first.indexOf('. ');
  const head = dot > 0 ? first.slice(0, dot + 1) : first;
  const hint = lines.length > 1 ? lines[lines.length - 1] : undefined;
  return hint ? `${head} ${hint}` : head;
}

/** Exactly these positionals, by name (for messages); optional ones may be absent. */
export function expectPositionals(positionals: readonly string[], required: readonly string[], optional: readonly string[] = []): string[] {
  if (positionals.length < required.length) {
    throw new UsageError(`missing ${required.slice(positionals.length).join(' and ')}.`);
  }
  if (positionals.length > required.length + optional.length) {
    const extra = positionals.slice(required.length + optional.length);
    throw new UsageError(`unexpected argument${extra.length > 1 ? 's' : ''}: ${extra.join(' ')}`);
  }
  return [...positionals];
}

/** A value that must be given. */
export function requireOption<T>(value: T | undefined, option: string, hint = ''): T {
  if (value === undefined) throw new UsageError(`${option} is required${hint ? ` (${hint})` : ''}.`);
  return value;
}

/**
 * Validate with a zod schema; each issue becomes one line of a usage error, named by its option
 * (`optionOf` maps a schema key such as rule_source to the flag the user typed, --rule-source).
 */
export function validate<S extends z.ZodType>(schema: S, input: unknown, optionOf: (key: string) => string = (k) => `--${k.replace(/_/g, '-')}`): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw new UsageError(
    'invalid arguments:',
    parsed.error.issues.map((issue) => {
      const key = issue.path[0];
      const where = typeof key === 'string' ? optionOf(key) : 'arguments';
      return `${where}: ${issue.message}`;
    }),
  );
}
