import { redirect } from "next/navigation";

// The fleet view is the page on-call opens first.
export default function Home() {
  redirect("/pipelines");
}
