// Passwords are hashed by the auth library (Better Auth's scrypt), the same function its sign-in
// verifies against. Loaded on first use: importing the library costs over a second, and every CLI
// command imports this package without ever hashing a password.
export async function hashPassword(password: string): Promise<string> {
  const { hashPassword: libraryHash } = await import("better-auth/crypto");
  return libraryHash(password);
}
