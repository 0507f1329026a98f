export { PageLoading as default } from '@/app/_components/page-loading';
