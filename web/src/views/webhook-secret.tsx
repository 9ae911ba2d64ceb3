/**
 * A webhook's signing secret, shown the one time the API answers it (creation, rotation), with a copy button and
 * the warning that it is not shown again.
 *
 * Owns: that notice. Must never: store the secret anywhere (it lives in this component's props only).
 */
import type { ComponentChildren } from 'preact';
import { CopyButton } from '../ui';

export function OnceSecret({ secret, what, children }: { secret: string; what: string; children?: ComponentChildren }) {
  return (
    <div role="status" class="notice">
      <p>
        {what}
        {children !== undefined && <>: {children}</>}. Its signing secret is shown this once: keep it where the receiver
        can read it.
      </p>
      <p>
        <code class="secret" aria-label="Signing secret">
          {secret}
        </code>{' '}
        <CopyButton value={secret} label="Copy signing secret" />
      </p>
    </div>
  );
}
