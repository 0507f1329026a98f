/** The URL of the `swarm` command's bundle for the checkout at `root`, made again if a source changed; undefined when it cannot be had. */
export function bundledCli(root: string): Promise<string | undefined>;
