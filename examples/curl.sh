#!/usr/bin/env bash
# A first session with Quarry over plain HTTP: register (or log in), mint an API key, connect a database, read its
# schema, search it, and read the key's rate-limit status. Uses jq when installed, otherwise node, to read JSON.
#
#   examples/curl.sh                        # SQLite: creates a small demo file, uploads it and connects it
#   PG_HOST=127.0.0.1 PG_DATABASE=shop PG_USER=reader PG_PASSWORD=... QUERY=headphones examples/curl.sh
#   PUBLISHABLE_ORIGIN=http://localhost:8080 examples/curl.sh   # and a publishable key for pages of that origin
#
# Settings (environment): QUARRY_URL (http://127.0.0.1:3000), QUARRY_EMAIL / QUARRY_PASSWORD (a new account
# by default; an existing one is logged in), EXAMPLE_DIR (./data/examples, where the demo file is made), SQLITE_FILE
# (quarry-example.db), PG_HOST / PG_PORT / PG_DATABASE / PG_USER / PG_PASSWORD, QUERY (granite),
# PUBLISHABLE_ORIGIN (unset: no publishable key).
set -euo pipefail

BASE="${QUARRY_URL:-http://127.0.0.1:3000}"
EMAIL="${QUARRY_EMAIL:-example-$(date +%s)-$RANDOM@example.com}"
PASSWORD="${QUARRY_PASSWORD:-correct-horse-42}"
QUERY="${QUERY:-granite}"
BODY_FILE="$(mktemp)"
trap 'rm -f "$BODY_FILE"' EXIT

# json FILTER: reads JSON on stdin and prints one field. FILTER is a jq path such as .data.secretKey.
json() {
  if command -v jq >/dev/null 2>&1; then
    jq -r "$1"
  else
    node -e '
      let text = ""; process.stdin.on("data", (c) => (text += c)).on("end", () => {
        const value = process.argv[1].split(".").filter(Boolean).reduce((node, key) => node?.[key], JSON.parse(text));
        console.log(typeof value === "object" ? JSON.stringify(value, null, 2) : value);
      });' "$1"
  fi
}

# call METHOD PATH TOKEN [BODY]: the body goes to $BODY_FILE, the status to stdout.
call() {
  local method="$1" path="$2" token="$3" body="${4:-}"
  local args=(-sS -o "$BODY_FILE" -w '%{http_code}' -X "$method" "$BASE$path")
  [ -n "$token" ] && args+=(-H "authorization: Bearer $token")
  [ -n "$body" ] && args+=(-H 'content-type: application/json' --data "$body")
  curl "${args[@]}"
}

# upload PATH TOKEN FILE: the file's bytes as the body (application/octet-stream), the status to stdout.
upload() {
  curl -sS -o "$BODY_FILE" -w '%{http_code}' -X PUT "$BASE$1" -H "authorization: Bearer $2" \
    -H 'content-type: application/octet-stream' --data-binary "@$3"
}

# expect STATUS... : stops with the error envelope when the last call answered anything else.
expect() {
  local status="$1"; shift
  for wanted in "$@"; do [ "$status" = "$wanted" ] && return 0; done
  echo "unexpected HTTP $status:" >&2
  json . <"$BODY_FILE" >&2
  exit 1
}

echo "1. register $EMAIL (or log in when the account exists)"
status=$(call POST /api/v1/auth/register "" "{\"email\":\"$EMAIL\",\"password\":\"$PASSWORD\",\"name\":\"Example\"}")
if [ "$status" != 201 ]; then
  status=$(call POST /api/v1/auth/login "" "{\"email\":\"$EMAIL\",\"password\":\"$PASSWORD\"}")
  expect "$status" 200
fi
JWT=$(json .data.tokens.accessToken <"$BODY_FILE")

echo "2. mint an API key (test environment, search permission; the secret is shown once)"
status=$(call POST /api/v1/keys "$JWT" '{"name":"curl example","environment":"test","permissions":["search"]}')
expect "$status" 201
KEY=$(json .data.secretKey <"$BODY_FILE")

if [ -n "${PG_HOST:-}" ]; then
  echo "3. connect PostgreSQL $PG_HOST/${PG_DATABASE:-postgres} (Quarry tests the connection before saving it)"
  body=$(printf '{"name":"PostgreSQL example","engine":"postgres","host":"%s","port":%s,"database":"%s","username":"%s","password":"%s","environment":"test"}' \
    "$PG_HOST" "${PG_PORT:-5432}" "${PG_DATABASE:-postgres}" "${PG_USER:-postgres}" "${PG_PASSWORD:-}")
else
  SQLITE_DIR="${EXAMPLE_DIR:-./data/examples}"
  SQLITE_FILE="${SQLITE_FILE:-quarry-example.db}"
  if [ ! -f "$SQLITE_DIR/$SQLITE_FILE" ]; then
    echo "   creating $SQLITE_DIR/$SQLITE_FILE: a products table with an FTS5 index"
    mkdir -p "$SQLITE_DIR"
    seed="CREATE TABLE products (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT);
      INSERT INTO products VALUES
        (1, 'Granite countertop sealer', 'Protects quarried stone surfaces from stains.'),
        (2, 'Marble polishing kit', 'Brings back the shine of marble and granite.'),
        (3, 'Garden hose', 'Fifty feet of flexible hose.');
      CREATE VIRTUAL TABLE products_fts USING fts5(title, body, content='products', content_rowid='id');
      INSERT INTO products_fts(products_fts) VALUES ('rebuild');"
    if command -v sqlite3 >/dev/null 2>&1; then
      sqlite3 "$SQLITE_DIR/$SQLITE_FILE" "$seed"
    else # the sqlite3 package Quarry itself uses (run from the repository root)
      node -e 'const db = new (require("sqlite3").Database)(process.argv[1]); db.exec(process.argv[2], (e) => { if (e) throw e; db.close(); });' \
        "$SQLITE_DIR/$SQLITE_FILE" "$seed"
    fi
  fi
  echo "3. upload $SQLITE_FILE into your own SQLite folder on the server (checked to be SQLite before it is kept)"
  status=$(upload "/api/v1/sqlite-files/$SQLITE_FILE" "$JWT" "$SQLITE_DIR/$SQLITE_FILE")
  expect "$status" 201 200
  echo "   connect it (Quarry tests the connection before saving it)"
  body="{\"name\":\"SQLite example\",\"engine\":\"sqlite\",\"database\":\"$SQLITE_FILE\",\"environment\":\"test\"}"
fi
status=$(call POST /api/v1/databases "$JWT" "$body")
expect "$status" 201
DATABASE_ID=$(json .data.database.id <"$BODY_FILE")
echo "   connected: $DATABASE_ID"

echo "4. read the schema Quarry found (tables, text columns, full-text indexes)"
status=$(call GET "/api/v1/databases/$DATABASE_ID/schema" "$JWT")
expect "$status" 200
json .data <"$BODY_FILE"

echo "5. search \"$QUERY\" with the API key"
status=$(call POST /api/v1/search "$KEY" "{\"query\":\"$QUERY\",\"databases\":[\"$DATABASE_ID\"],\"limit\":5}")
expect "$status" 200
json .data.results <"$BODY_FILE"

echo "6. the key's rate-limit status (this call does not count against the limit)"
status=$(call GET /api/v1/rate-limit/status "$KEY")
expect "$status" 200
json .data.rateLimit.current <"$BODY_FILE"

if [ -n "${PUBLISHABLE_ORIGIN:-}" ]; then
  echo "7. a publishable key for web pages of $PUBLISHABLE_ORIGIN (search only, this database only; public by design)"
  status=$(call POST /api/v1/keys/publishable "$JWT" \
    "{\"name\":\"Web page\",\"environment\":\"test\",\"databases\":[\"$DATABASE_ID\"],\"allowedOrigins\":[\"$PUBLISHABLE_ORIGIN\"]}")
  expect "$status" 201
  echo "   publishable key: $(json .data.publishableKey <"$BODY_FILE")"
fi
