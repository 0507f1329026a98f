import { NextResponse, type NextRequest } from 'next/server';

/**
 * Passes the requested page path to server components, so a page reached without a session can send the user to
 * the login and back to exactly this page. Authorization itself happens in the pages and routes, never here.
 */
export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  headers.set('x-swarm-path', request.nextUrl.pathname + request.nextUrl.search);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  matcher: ['/((?!api/|access/|mcp$|_next/|favicon.ico).*)'],
};
