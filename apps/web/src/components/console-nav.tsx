"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";

const AREAS = [
  { href: "/pipelines", label: "Pipelines" },
  { href: "/alerts", label: "Alerts" },
  { href: "/change-requests", label: "Change requests" },
  { href: "/audit", label: "Audit" },
] as const;

/** `admin`: also the Admin area (people, teams, single sign-on). */
export function ConsoleNav({ admin = false }: { admin?: boolean }) {
  const pathname = usePathname();
  const areas = admin ? [...AREAS, { href: "/admin", label: "Admin" }] : AREAS;
  return (
    <nav className="nav" aria-label="Console">
      {areas.map(({ href, label }) => {
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
