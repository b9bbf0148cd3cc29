/** Who a provider says is logging in. */
export interface ProviderIdentity {
  /** Id of the identity within its provider. */
  id: string;
  /** User metadata the provider contributes (email, metadata_fields, ...). */
  data?: Record<string, unknown>;
  /** Set when the credential names its user directly (API keys). */
  userId?: string;
  /** Runs once the identity's user exists (the email/password account remembers its user). */
  onUserCreated?: (userId: string) => Promise<void>;
}
