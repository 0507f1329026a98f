/** @type {import('next').NextConfig} */
const nextConfig = {
  // A separate build folder lets two builds (e.g. two e2e runs) share a checkout: NEXT_DIST_DIR=.next-b
  distDir: process.env.NEXT_DIST_DIR || '.next',
  // better-sqlite3 is a native addon: load it from node_modules at run time, never bundle it.
  // The MCP SDK starts child processes and reads its own files: loaded from node_modules too.
  serverExternalPackages: ['better-sqlite3', '@modelcontextprotocol/sdk'],
  poweredByHeader: false,
  reactStrictMode: true,
  // forbidden(): a console page refused to a role answers HTTP 403 (lib/http/page-auth.ts, app/(console)/forbidden.tsx).
  // The build's type check runs TypeScript's own command line (TypeScript 7, native): 4 s instead of 14 s through the
  // API, and a type error still fails the build.
  experimental: { authInterrupts: true, useTypeScriptCli: true },
  // Next.js does not route folders whose name starts with a dot: the AuthZEN metadata lives under /api.
  async rewrites() {
    return [
      { source: '/.well-known/authzen-configuration', destination: '/api/authzen/configuration' },
      { source: '/.well-known/oauth-protected-resource/mcp', destination: '/api/mcp/resource-metadata' },
    ];
  },
  async headers() {
    return [
      {
        source: '/:path*',
        headers: [
          { key: 'X-Frame-Options', value: 'DENY' },
          { key: 'X-Content-Type-Options', value: 'nosniff' },
          { key: 'Referrer-Policy', value: 'same-origin' },
        ],
      },
    ];
  },
};

export default nextConfig;
