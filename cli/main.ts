/** The `swarm` command's entry point (loaded by bin/swarm.mjs): run the command line, set the exit status. */
import { main } from './run';

// `swarm denials --csv | head` closes the pipe early: that is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const ctx = {
  io: { out: (text: string) => void process.stdout.write(text), err: (text: string) => void process.stderr.write(text) },
  env: process.env,
};
const readStdin = async () => {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

process.exitCode = await main(ctx, process.argv.slice(2), readStdin);
