/**
 * A PostgreSQL database of its own on TEST_DATABASE_URL's server, dropped and created anew, for a
 * suite that runs the real service process (the other suites share TEST_DATABASE_URL's database).
 * Its URL, or null when TEST_DATABASE_URL is not set.
 */
export async function ownPostgresDatabase(suffix: string): Promise<string | null> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return null;
  const { default: postgres } = await import("postgres");
  const u = new URL(url);
  const name = `${decodeURIComponent(u.pathname.slice(1)) || "postgres"}_${suffix}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  u.pathname = `/${name}`;
  return u.toString();
}
