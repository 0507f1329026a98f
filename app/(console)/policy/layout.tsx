import { sectionLayout } from '@/app/_components/section-layout';

export const dynamic = 'force-dynamic';

/** /policy: its role checked before anything of it streams (app/_components/section-layout.tsx). */
export default sectionLayout('/policy', 'auditor');
