import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /.well-known/oauth-protected-resource/mcp (rewritten here by next.config.mjs): defined in lib/http/routes/mcp.ts. */
export const { GET } = nextHandlers('/.well-known/oauth-protected-resource/mcp');
