import type { Metadata } from "next";
import type { ReactNode } from "react";
import { TrpcReactProvider } from "@/trpc/react";
import "./globals.css";

// Every page is rendered per request: the Content-Security-Policy's nonce (src/proxy.ts) is new each
// time and Next.js can only put it on the scripts of a page it renders now, not of a prerendered one.
export const dynamic = "force-dynamic";

export const metadata: Metadata = {
  title: { default: "Sluice", template: "%s · Sluice" },
  description: "Operate streaming pipelines that stay correct.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TrpcReactProvider>{children}</TrpcReactProvider>
      </body>
    </html>
  );
}
