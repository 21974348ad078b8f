// Set while the user signs out: the page's polling queries then answer UNAUTHORIZED, and the session
// guard must not race the sign-out's own navigation to /sign-in with a "/sign-in?next=…" of its own.
let signingOut = false;

export const markSigningOut = (): void => {
  signingOut = true;
};
export const isSigningOut = (): boolean => signingOut;
