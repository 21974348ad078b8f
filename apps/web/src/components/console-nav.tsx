"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";

const AREAS = [
  { href: "/pipelines", label: "Pipelines" },
  { href: "/alerts", label: "Alerts" },
  { href: "/change-requests", label: "Change requests" },
  { href: "/audit", label: "Audit" },
] as const;

export function ConsoleNav() {
  const pathname = usePathname();
  return (
    <nav className="nav" aria-label="Console">
      {AREAS.map(({ href, label }) => {
        const active = pathname === href || pathname.startsWith(`${href}/`);
        return (
          <Link key={href} href={href} className="nav__link" aria-current={active ? "page" : undefined}>
            {label}
          </Link>
        );
      })}
    </nav>
  );
}
