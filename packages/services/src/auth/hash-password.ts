// Passwords are hashed by the auth library (Better Auth's scrypt), the same function its sign-in
// verifies against. Loaded on first use: importing the library costs over a second, and every CLI
// command imports this package without ever hashing a password.
export async function hashPassword(password: string): Promise<string> {
  const { hashPassword: libraryHash } = await import("better-auth/crypto");
  return libraryHash(password);
}

/** Whether `password` is the one `hash` was made from (what the console's sign-in checks). */
export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  const { verifyPassword: libraryVerify } = await import("better-auth/crypto");
  return libraryVerify({ hash, password });
}
