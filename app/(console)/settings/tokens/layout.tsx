import { sectionLayout } from '@/app/_components/section-layout';

export const dynamic = 'force-dynamic';

/** /settings/tokens: its role checked before anything of it streams (app/_components/section-layout.tsx). */
export default sectionLayout('/settings/tokens', 'admin');
