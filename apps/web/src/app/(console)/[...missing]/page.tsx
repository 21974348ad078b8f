// Any URL the console does not have: answered 404 inside the console's frame (navigation, sign-in
// status), by the not-found page beside this folder, rather than a bare unstyled page with no way back.
import { notFound } from "next/navigation";

export default function MissingPage(): never {
  notFound();
}
