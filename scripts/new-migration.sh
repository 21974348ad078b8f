#!/usr/bin/env bash
# Creates a migration from the change to prisma/schema.prisma since a git revision (default HEAD).
# `prisma migrate dev` needs a shadow database and the native schema engine; diffing two datamodels
# works offline on the JS engine. See docs/database.md.
#
#   bash scripts/new-migration.sh add_alerts [REV]
set -euo pipefail
name="${1:?usage: new-migration.sh NAME [REV]}"
rev="${2:-HEAD}"
cd "$(dirname "$0")/.."
# The diff reads no database, but the schema names DATABASE_URL.
export DATABASE_URL="${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/sluice}"
# Inside the project: Prisma resolves the config next to the schemas it reads.
mkdir -p .cache
prev=".cache/previous-schema.prisma"
git show "$rev:prisma/schema.prisma" >"$prev"
dir="prisma/migrations/$(date -u +%Y%m%d%H%M%S)_$name"
mkdir -p "$dir"
npx prisma migrate diff --from-schema-datamodel "$prev" --to-schema-datamodel prisma/schema.prisma --script >"$dir/migration.sql"
echo "wrote $dir/migration.sql — review it, then: npx prisma migrate deploy"
