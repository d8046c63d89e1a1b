// Signing in: the app's own credentials (an API key, a bearer token, or the session cookie a
// better-auth app already set), checked by asking the server; a refusal shows its message.

import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { Credential } from "./api.ts";
import { t } from "./strings.ts";

export function SignIn({ failure, onSignIn }: { failure?: string; onSignIn: (c: Credential) => void }) {
  const [kind, setKind] = useState<Credential["kind"]>("apiKey");
  const [secret, setSecret] = useState("");
  const submit = (event: Event) => {
    event.preventDefault();
    onSignIn({ kind, secret: kind === "session" ? "" : secret.trim() });
  };
  return html`
    <main class="sign-in">
      <h1>${t.signIn}</h1>
      <p>${t.signInIntro}</p>
      ${failure && html`<p role="alert" class="error">${failure}</p>`}
      <form onSubmit=${submit}>
        <label>${t.credentialKind}
          <select value=${kind} onChange=${(e: Event) => setKind((e.target as HTMLSelectElement).value as Credential["kind"])}>
            <option value="apiKey">${t.apiKey}</option>
            <option value="bearer">${t.bearer}</option>
            <option value="session">${t.session}</option>
          </select>
        </label>
        ${
          kind !== "session" &&
          html`<label>${t.secret}
            <input type="password" required autocomplete="off" value=${secret} onInput=${(e: Event) => setSecret((e.target as HTMLInputElement).value)} />
          </label>`
        }
        <button type="submit">${t.signIn}</button>
      </form>
    </main>
  `;
}
