#!/usr/bin/env bash
# The package as a user gets it: `npm pack` (prepack builds dist), the tarball installed into a
# new project with zod, the README's "Defining an API" example type-checked under
# moduleResolution nodenext and bundler, compiled, run with plain node, and asked for its products;
# then consumer-client-check.sh: a client project on its own install of another patch version.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

version() { node -p "require('$root/package.json').devDependencies['$1']"; }

tarball=$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -1)
echo "consumer: packed $tarball ($(du -k "$work/$tarball" | cut -f1) KiB)"
tar -tzf "$work/$tarball" > "$work/contents"
grep -q "^package/dist/index.mjs$" "$work/contents" || { echo "consumer: the tarball has no dist"; exit 1; }

mkdir "$work/app" && cd "$work/app"
echo '{ "name": "consumer", "private": true, "type": "module" }' > package.json
npm install --no-audit --no-fund --loglevel=warn "../$tarball" "zod@$(version zod)" \
  "typescript@$(version typescript)" "@types/node@$(version @types/node)" >/dev/null 2>install.log
# The package and everything it installs accept this Node: not one EBADENGINE warning.
if grep -q EBADENGINE install.log; then
  echo "consumer: installing crudkit-api on Node $(node -v) warns EBADENGINE:"; grep -A3 EBADENGINE install.log; exit 1
fi
echo "consumer: installing the package on Node $(node -v) prints no EBADENGINE warning"

# The README block, exactly as printed.
node -e '
  const readme = require("fs").readFileSync(process.argv[1], "utf8");
  const block = readme.split("## Defining an API")[1].match(/```ts title="server.ts"\n([\s\S]*?)```/)[1];
  require("fs").writeFileSync("server.ts", block);
' "$root/README.md"

for resolution in nodenext bundler; do
  module=$([ "$resolution" = bundler ] && echo esnext || echo nodenext)
  cat > "tsconfig.$resolution.json" <<JSON
{ "compilerOptions": { "target": "es2022", "module": "$module", "moduleResolution": "$resolution",
  "strict": true, "skipLibCheck": false, "types": ["node"], "outDir": "out-$resolution" }, "files": ["server.ts"] }
JSON
  npx tsc -p "tsconfig.$resolution.json" --noEmit
  echo "consumer: the README example type-checks with moduleResolution $resolution"
done

npx tsc -p tsconfig.nodenext.json
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
PORT=$port ADMIN_KEY=consumer-key node out-nodenext/server.js > server.log 2>&1 &
pid=$!
for _ in $(seq 1 100); do grep -q "listening" server.log && break; sleep 0.1; done
answer=$(curl -sf "http://127.0.0.1:$port/api/products")
echo "consumer: GET /api/products answered $answer"
node -e 'const body = JSON.parse(process.argv[1]); if (!Array.isArray(body.items) || body.pagination.total !== 0) process.exit(1)' "$answer"
created=$(curl -sf -X POST "http://127.0.0.1:$port/api/product" -H "x-api-key: consumer-key" \
  -H "content-type: application/json" -d '{"name":"Hat","price":5}')
node -e 'if (JSON.parse(process.argv[1]).name !== "Hat") process.exit(1)' "$created"
echo "consumer: plain node runs the packed package: created $created"
node -e 'try { require("crudkit-api") } catch (e) { if (!/ESM-only/.test(e.message)) process.exit(1); console.log("consumer: require() says: " + e.message) }'

# A client project with its own install of the package, another patch version: still typed.
bash "$root/scripts/consumer-client-check.sh" "$work/$tarball" "$work/app"
