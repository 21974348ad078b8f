import type { Metadata } from "next";
import type { ReactNode } from "react";
import { TrpcReactProvider } from "@/trpc/react";
import "./globals.css";

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
