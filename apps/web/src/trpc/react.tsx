"use client";
// The browser's tRPC client: TanStack Query underneath, superjson so Dates survive the wire.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { createTRPCClient, httpBatchLink, httpLink, splitLink } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import superjson from "superjson";
import { z } from "zod";
import type { AppRouter } from "@/server/trpc/root";

// The console's Content-Security-Policy allows no eval: zod would otherwise probe for it (`Function("")`)
// the first time it parses in the browser — harmless, but a policy violation on every page load.
z.config({ jitless: true });

export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();

function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 10_000,
        // Refusals will not change by retrying; a 401 means the session ended (see SessionGuard).
        retry: (failures, error) => !isAuthError(error) && failures < 2,
      },
    },
  });
}

export function isAuthError(error: unknown): boolean {
  const code = (error as { data?: { code?: string } } | null)?.data?.code;
  return code === "UNAUTHORIZED" || code === "FORBIDDEN";
}

export function TrpcReactProvider({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        splitLink({
          // A draft's check and dry run carry a whole spec, which does not fit in a URL: sent as POST
          // (the server allows the override), one request each so a slow dry run holds nothing else up.
          condition: (op) => op.path === "draft.check" || op.path === "draft.dryRun",
          true: httpLink({ url: "/api/trpc", transformer: superjson, methodOverride: "POST" }),
          false: httpBatchLink({ url: "/api/trpc", transformer: superjson }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
