#!/usr/bin/env bash
# The typed client from its own install (issue 45, item 8): a client project that installs
# crudkit-api by itself, at another patch version than the server's and without optional
# dependencies, type-checks `createClient<typeof app>` against the server project's source (expand
# and relation filters included) and talks to that server, run with plain node.
# Called by consumer-check.sh: consumer-client-check.sh <the packed tarball> <the server project>,
# the server project (a folder beside the tarball) having that tarball, zod, typescript and
# @types/node installed.
set -euo pipefail
tarball=$1
server=$2
work=$(dirname "$tarball")
pid=""
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

installed() { node -p "require('$1/node_modules/$2/package.json').version"; }

# The same package one patch version on. TypeScript takes two installs of one name and version as
# one package; of two versions, it keeps two copies of the declarations, as a real client would.
server_version=$(installed "$server" crudkit-api)
client_version=$(node -p "const [a, b, c] = process.argv[1].split('.'); [a, b, Number(c) + 1].join('.')" "$server_version")
mkdir "$work/repack"
tar -xzf "$tarball" -C "$work/repack"
node -e '
  const fs = require("fs");
  const manifest = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  manifest.version = process.argv[2];
  fs.writeFileSync(process.argv[1], JSON.stringify(manifest, null, 2));
' "$work/repack/package/package.json" "$client_version"
tar -czf "$work/client-$client_version.tgz" -C "$work/repack" package

# The server: a blog whose posts reference authors, run with plain node.
cat > "$server/blog.ts" <<'TS'
import { createResource, crudkit, references, withId } from "crudkit-api";
import { z } from "zod";

const everyone = { read: true, list: true, create: true };
const author = createResource({ name: "author", schema: withId({ name: z.string() }), access: everyone });
const post = createResource({
  name: "post",
  schema: withId({ title: z.string(), authorId: references(author) }),
  access: everyone,
});
export const blog = crudkit({ database: { provider: "sqlite", url: ":memory:" }, autoMigrate: true, resources: [author, post] });
TS
cat > "$server/blog-server.ts" <<'TS'
import { serve } from "crudkit-api/node";
import { blog } from "./blog.js";

const ada = await blog.api.createAuthor({ body: { name: "Ada" } });
const bob = await blog.api.createAuthor({ body: { name: "Bob" } });
await blog.api.createPost({ body: { title: "Engines", authorId: ada.id } });
await blog.api.createPost({ body: { title: "Boats", authorId: bob.id } });
const running = await serve(blog, { port: Number(process.env.PORT) });
console.log(`listening on ${running.url}`);
TS
(cd "$server" && npx tsc --target es2022 --module nodenext --moduleResolution nodenext --strict \
  --types node --outDir out-blog blog-server.ts)

# The client: its own project and its own copy of crudkit-api; nothing native to build.
mkdir "$work/client" && cd "$work/client"
echo '{ "name": "consumer-client", "private": true, "type": "module" }' > package.json
started=$(date +%s%N)
npm install --prefer-offline --omit=optional --no-audit --no-fund --loglevel=warn "../client-$client_version.tgz" \
  "zod@$(installed "$server" zod)" "typescript@$(installed "$server" typescript)" \
  "@types/node@$(installed "$server" @types/node)" >/dev/null
took=$((($(date +%s%N) - started) / 1000000))
node -e '
  const manifest = require("./node_modules/crudkit-api/package.json");
  if (!manifest.optionalDependencies?.["better-sqlite3"]) { console.log("consumer: better-sqlite3 is not optional"); process.exit(1) }
'
if [ -e node_modules/better-sqlite3 ] || [ -n "$(find node_modules -name '*.node' -print -quit)" ]; then
  echo "consumer: the client's install (--omit=optional) has a native module"; exit 1
fi
echo "consumer: the client installs crudkit-api $(installed . crudkit-api) with --omit=optional in ${took} ms, no native module"

sed "s|SERVER|$(basename "$server")|" > check.ts <<'TS'
import { createClient } from "crudkit-api/client";
import type { blog } from "../SERVER/blog.js";

const client = createClient<typeof blog>({ baseURL: process.argv[2] ?? "" });
const { data, error } = await client.post.list({ expand: ["author"], where: { "author.name": "Ada" } });
if (error) throw new Error(error.message);
const names: (string | undefined)[] = data.items.map((post) => post.author?.name);
console.log(JSON.stringify({ titles: data.items.map((post) => post.title), names }));
// @ts-expect-error: a post has no relation "editor"
await client.post.list({ expand: ["editor"] });
TS
cat > tsconfig.json <<'JSON'
{ "compilerOptions": { "target": "es2022", "module": "nodenext", "moduleResolution": "nodenext",
  "strict": true, "skipLibCheck": false, "types": ["node"], "rootDir": "..", "outDir": "out" }, "files": ["check.ts"] }
JSON
npx tsc -p tsconfig.json
echo "consumer: createClient<typeof blog> (server on crudkit-api $server_version, client on $client_version) type-checks expand and author.name"

cd "$server"
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
PORT=$port node out-blog/blog-server.js > blog-server.log 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q "listening" blog-server.log && break; sleep 0.1; done
answer=$(node "$work/client/out/client/check.js" "http://127.0.0.1:$port/api")
echo "consumer: the client's list with expand and where author.name answered $answer"
[ "$answer" = '{"titles":["Engines"],"names":["Ada"]}' ] || { echo "consumer: unexpected answer"; exit 1; }
