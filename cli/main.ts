/** The `swarm` command's entry point (loaded by bin/swarm.mjs): run the command line, set the exit status. */
import { run } from './run';

// `swarm denials --csv | head` closes the pipe early: that is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = run(
  {
    io: { out: (text) => void process.stdout.write(text), err: (text) => void process.stderr.write(text) },
    env: process.env,
  },
  process.argv.slice(2),
);
