import { sectionLayout } from '@/app/_components/section-layout';

export const dynamic = 'force-dynamic';

/** /audit: its role checked before anything of it streams (app/_components/section-layout.tsx). */
export default sectionLayout('/audit', 'auditor');
