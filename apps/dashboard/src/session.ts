import { useQuery } from '@tanstack/react-query';
import { api, setCsrfToken, type DashboardSession } from './api.ts';

export function useSession() {
  return useQuery({
    queryKey: ['session'],
    queryFn: async () => {
      const s = await api<DashboardSession>('GET', '/session');
      setCsrfToken(s.csrfToken);
      return s;
    },
    staleTime: 60_000,
  });
}
