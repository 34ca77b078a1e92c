import { EmployeeSearch } from '../features/impersonation/components/EmployeeSearch';
import { useSession } from '../features/session/session';

/** « Emprunter une identité » (superusers, when the server allows it). */
export function ImpersonationScreen() {
  const { impersonate } = useSession();
  return <EmployeeSearch impersonate={impersonate} />;
}
