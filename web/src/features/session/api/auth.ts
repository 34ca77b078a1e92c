/** The session's calls: who the token opens, a token for a username and password, an impersonation token and its end. */
import { api, ok, type Schemas } from '../../../api/client';

export async function fetchMe(): Promise<Schemas['Me']> {
  return ok(api.GET('/api/auth/me/'));
}

/** Exchanges a username and password for a token; the server's message on failure. */
export async function requestToken(username: string, password: string): Promise<string> {
  const result = await ok(api.POST('/api/auth/token/', { body: { username, password } }));
  return result.access;
}

/** A token speaking for another account (superuser, ALLOW_IMPERSONATION). */
export async function startImpersonation(account: number): Promise<string> {
  const answer = await ok(api.POST('/api/auth/impersonate/', { body: { account } }));
  return answer.access;
}

/**
 * Records the end of an impersonation, with the impersonation token still bound (the audit
 * line impersonation_ended); the client then takes its own token again whatever the answer.
 */
export async function endImpersonationOnServer(): Promise<void> {
  await ok(api.POST('/api/auth/impersonate/end/', {}));
}
