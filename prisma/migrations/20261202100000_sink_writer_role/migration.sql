-- Sinks are written as a role of their own (issue 19 item 5; engine store/sink-writer-role.ts):
-- sluice_sink_writer may read and write the tables of the sinks schema and nothing else, so a sink
-- write can never reach a control-plane table. Roles belong to the Postgres cluster, not to one
-- database: this creates the role once when the user running migrations may create roles; otherwise a
-- DBA creates it first (docs/security.md, "The sink writer role"). The user running migrations — the
-- app's user — becomes a member, so it may SET ROLE to it inside a transaction.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'sluice_sink_writer') THEN
    BEGIN
      CREATE ROLE sluice_sink_writer NOLOGIN;
    EXCEPTION
      -- Created meanwhile by another database's migration in the same cluster.
      WHEN duplicate_object OR unique_violation THEN NULL;
      WHEN insufficient_privilege THEN
        RAISE EXCEPTION 'Sluice writes sinks as the role sluice_sink_writer, which does not exist, and % may not create roles', current_user
          USING HINT = format('have a DBA run: CREATE ROLE sluice_sink_writer NOLOGIN; GRANT sluice_sink_writer TO %I; then run the migrations again (docs/security.md, "The sink writer role")', current_user);
    END;
  END IF;
  IF NOT pg_has_role(current_user, 'sluice_sink_writer', 'MEMBER') THEN
    EXECUTE format('GRANT sluice_sink_writer TO %I', current_user);
  END IF;
END $$;

CREATE SCHEMA IF NOT EXISTS "sluice_sinks";
GRANT USAGE ON SCHEMA "sluice_sinks" TO sluice_sink_writer;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "sluice_sinks" TO sluice_sink_writer;
-- Tables the app's user creates there later (a new version's tables) are the writer's to write too.
ALTER DEFAULT PRIVILEGES IN SCHEMA "sluice_sinks" GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO sluice_sink_writer;
