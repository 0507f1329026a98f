import { nextHandlers } from '@/lib/http/next-handlers';

export const dynamic = 'force-dynamic';

/** /api/v1/auth/sso/{provider}/backchannel-logout: the route table's entry (lib/http/route-table.ts), defined in lib/http/routes/sso.ts (POST ssoBackchannelLogout). */
export const { POST } = nextHandlers('/api/v1/auth/sso/{provider}/backchannel-logout');
