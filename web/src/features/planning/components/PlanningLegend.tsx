/** The legend of a planning grid: the kinds of cell both plannings draw, then the grid's own last kinds. */
export function PlanningLegend({ last }: { last: { swatch: string; label: string } | Array<{ swatch: string; label: string }> }) {
  return (
    <ul className="legend" aria-label="Légende">
      <li><span className="swatch work" /> Travaillé</li>
      <li><span className="swatch modified" /> Journée modifiée</li>
      <li><span className="swatch absence" /> Absence</li>
      <li><span className="swatch pending" /> Demande en attente</li>
      <li><span className="swatch rest" /> Repos</li>
      {(Array.isArray(last) ? last : [last]).map((item) => (
        <li key={item.swatch}><span className={`swatch ${item.swatch}`} /> {item.label}</li>
      ))}
    </ul>
  );
}
