import { sectionLayout } from '@/app/_components/section-layout';

export const dynamic = 'force-dynamic';

/** /reports: its role checked before anything of it streams (app/_components/section-layout.tsx). */
export default sectionLayout('/reports', 'auditor');
