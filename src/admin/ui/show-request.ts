// "Show request": the HTTP request and the typed-client call that do what the admin just did, so
// the admin teaches the API. Credentials are never shown.

import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { t } from "./strings.ts";

export function ShowRequest({
  method,
  url,
  body,
  call,
}: {
  method: string;
  url: string;
  body?: unknown;
  call: string;
}) {
  const [open, setOpen] = useState(false);
  return html`<div class="show-request">
    <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? t.hideRequest : t.showRequest}</button>
    ${
      open &&
      html`<pre><code>${method} ${url}${body === undefined ? "" : `\ncontent-type: application/json\n\n${JSON.stringify(body, null, 2)}`}</code></pre>
      <pre><code>${call}</code></pre>`
    }
  </div>`;
}
