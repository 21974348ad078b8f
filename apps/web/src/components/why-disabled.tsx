// Why a control is disabled, shown beside it — not only in a hover title, which keyboard and touch
// users never see — and tied to it (aria-describedby) so a screen reader reads it with the control.
export function WhyDisabled({ id, reason }: { id: string; reason: string | null | undefined }) {
  return reason ? (
    <span id={id} className="why-disabled muted small" data-testid="why-disabled">
      {reason}
    </span>
  ) : null;
}
