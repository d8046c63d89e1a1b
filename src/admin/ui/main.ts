// The admin page: signs in, learns the resources (OpenAPI) and what the caller may do (the
// permissions endpoint), and shows the list or the form the URL names. Configuration comes from
// the page's <meta name="crudkit-admin"> (the CSP allows no inline script).

import { html } from "htm/preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, type Credential, request, saveCredential, savedCredential } from "./api.ts";
import { FilesView } from "./files.ts";
import { ListView } from "./list-view.ts";
import { type ApiModel, readModel } from "./model.ts";
import { RecordForm } from "./record-form.ts";
import { listHref, useRoute } from "./route.ts";
import { SignIn } from "./sign-in.ts";
import { chooseCatalog, t } from "./strings.ts";

export interface AdminConfig {
  basePath: string;
  adminPath: string;
  title: string;
  /** A catalog's language (`en`, `ar`), or none to follow the browser. */
  locale?: string;
}

export interface Verdict {
  allowed: boolean;
  reason?: string;
}

export interface ResourceAccess {
  name: string;
  plural: string;
  list: Verdict;
  create: Verdict;
  hiddenFields: string[];
}

/** What every view is given: where the API is, who asks, and what the API is. */
export interface Session {
  config: AdminConfig;
  credential: Credential | undefined;
  model: ApiModel;
  access: Map<string, ResourceAccess>;
  /** The upload plugin's file list answers her: the files view is offered. */
  files: boolean;
}

const config = JSON.parse(
  document.querySelector('meta[name="crudkit-admin"]')?.getAttribute("content") ?? "{}",
) as AdminConfig;

function App() {
  const [credential, setCredential] = useState<Credential | undefined>(savedCredential);
  const [session, setSession] = useState<Session>();
  const [failure, setFailure] = useState<string>();
  const route = useRoute();

  useEffect(() => {
    if (!credential) return setSession(undefined);
    let live = true;
    (async () => {
      try {
        // The document says which header carries an API key; then the server says what she may do.
        const openapi = await request<Record<string, unknown>>(
          undefined,
          "GET",
          `${config.basePath}/openapi.json`,
        );
        const header = readModel(openapi.body, []).apiKeyHeader;
        const signedIn = header ? { ...credential, header } : credential;
        const permissions = await request<{ resources: ResourceAccess[] }>(
          signedIn,
          "GET",
          `${config.adminPath}/permissions`,
        );
        const resources = permissions.body.resources;
        const model = readModel(openapi.body, resources);
        const access = new Map(resources.map((r) => [r.name, r]));
        const files = await request(signedIn, "GET", `${config.basePath}/upload/files?limit=1`).then(
          () => true,
          () => false,
        );
        if (live) setSession({ config, credential: signedIn, model, access, files });
      } catch (error) {
        if (!live) return;
        saveCredential(undefined);
        setCredential(undefined);
        setFailure(error instanceof ApiError ? error.message : String(error));
      }
    })();
    return () => {
      live = false;
    };
  }, [credential]);

  if (!credential)
    return html`<${SignIn}
      failure=${failure}
      onSignIn=${(c: Credential) => {
        setFailure(undefined);
        saveCredential(c);
        setCredential(c);
      }}
    />`;
  if (!session) return html`<p class="loading" role="status">${t.loading}</p>`;
  const listable = [...session.access.values()].filter(
    (r) => r.list.allowed && session.model.resources.has(r.name),
  );
  const current = route.resource && listable.find((r) => r.name === route.resource);
  return html`
    <div class="shell">
      <header class="top">
        <h1>${config.title}</h1>
        <${ThemeSwitch} />
        <button type="button" onClick=${() => {
          saveCredential(undefined);
          setCredential(undefined);
        }}>${t.signOut}</button>
      </header>
      <${Navigation} resources=${listable} current=${route.resource} files=${session.files} />
      <main id="main">
        ${
          route.resource === FILES_ROUTE && session.files
            ? html`<${FilesView} session=${session} />`
            : !current
              ? html`<p>${listable.length === 0 ? t.nothingToList : t.resources}</p>`
              : route.id !== undefined
                ? html`<${RecordForm} key=${`${current.name}/${route.id}`} session=${session} resource=${current.name} id=${route.id} />`
                : html`<${ListView} key=${current.name} session=${session} resource=${current.name} query=${route.query} />`
        }
      </main>
    </div>
  `;
}

/** The files view's place in the URL: `#/_files` (no resource's name starts with an underscore). */
const FILES_ROUTE = "_files";

function Navigation({
  resources,
  current,
  files,
}: {
  resources: ResourceAccess[];
  current?: string;
  files: boolean;
}) {
  const [find, setFind] = useState("");
  const shown = resources.filter((r) =>
    `${r.name} ${r.plural}`.toLowerCase().includes(find.toLowerCase().trim()),
  );
  const link = (href: string, here: boolean, text: string) =>
    html`<li><a href=${href} aria-current=${here ? "page" : undefined}>${text}</a></li>`;
  // Two groups: the app's resources (searchable when there are many), then the uploaded files.
  return html`
    <nav aria-label=${t.resources}>
      <h2 class="group" id="nav-data">${t.data}</h2>
      ${
        resources.length > 8 &&
        html`<label for="nav-find">${t.findResource}</label>
          <input id="nav-find" type="search" value=${find} onInput=${(e: Event) => setFind((e.target as HTMLInputElement).value)} />`
      }
      <ul aria-labelledby="nav-data">${shown.map((r) => link(listHref(r.name), r.name === current, r.plural))}</ul>
      ${
        files &&
        html`<h2 class="group" id="nav-files">${t.uploads}</h2>
          <ul aria-labelledby="nav-files">${link(listHref(FILES_ROUTE), current === FILES_ROUTE, t.files)}</ul>`
      }
    </nav>
  `;
}

function ThemeSwitch() {
  const [dark, setDark] = useState(() => matchMedia("(prefers-color-scheme: dark)").matches);
  useEffect(() => {
    document.documentElement.dataset.theme = dark ? "dark" : "light";
  }, [dark]);
  return html`<label class="switch"><input type="checkbox" role="switch" checked=${dark} onChange=${() => setDark(!dark)} /> ${t.theme}</label>`;
}

// The page's language: the app's choice (`admin: { locale }`), else the browser's.
const strings = chooseCatalog(config.locale ? [config.locale] : navigator.languages);
document.documentElement.lang = strings.lang;
document.documentElement.dir = strings.dir;
render(html`<${App} />`, document.getElementById("admin")!);
