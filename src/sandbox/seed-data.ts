/** Word pools the seeded records are drawn from (lists kept as text to stay compact). */
const words = (text: string): readonly string[] => text.trim().split(/\s*\|\s*/);

export const FIRST_NAMES = words(`
  Ada | Alan | Amara | Ana | Aiko | Boris | Chen | Chloe | Dmitri | Elena | Emeka | Farah | Grace |
  Hannah | Hiroshi | Ines | Ivan | Jamal | Julia | Kofi | Lars | Leila | Lucas | Maria | Mateo | Mei |
  Nadia | Noah | Olga | Omar | Priya | Rafael | Sara | Sven | Tariq | Thu | Uma | Victor | Wen |
  Yusuf | Zara | Zoe`);
export const LAST_NAMES = words(`
  Adeyemi | Andersson | Becker | Costa | Dubois | Eriksen | Fischer | Garcia | Haddad | Ito | Jensen |
  Kowalski | Kumar | Lopez | Lovelace | Martin | Meyer | Nakamura | Novak | Okafor | Olsen | Patel |
  Petrov | Quinn | Rossi | Schmidt | Silva | Smith | Tanaka | Turing | Unger | Varga | Wang | Weber |
  Xu | Yilmaz | Zhang`);
export const DEPARTMENTS = words(`
  Marketing | Sales | Creative | Legal | Finance | Engineering | Product | Support | Archive |
  Communications | Human Resources | Photography`);
export const ROLES = words('Viewers | Editors | Uploaders | Approvers | Administrators');
export const COMPANIES = words(
  'Northwind Media | Contoso Pictures | Fabrikam Studios | Tailspin Press | Litware Brands',
);
/** City, state, zip, country. */
export const PLACES: readonly (readonly [string, string, string, string])[] = [
  ['Portland', 'OR', '97201', 'US'],
  ['Austin', 'TX', '73301', 'US'],
  ['Toronto', 'ON', 'M5H 2N2', 'CA'],
  ['London', '', 'EC1A 1BB', 'GB'],
  ['Berlin', '', '10115', 'DE'],
  ['Lyon', '', '69001', 'FR'],
  ['Osaka', '', '530-0001', 'JP'],
  ['Sydney', 'NSW', '2000', 'AU'],
];
export const STREETS = words(
  'Main Street | Harbour Road | Market Square | Elm Avenue | Station Road | Park Lane',
);
export const ACL_NAMES = words(
  'Read only | Standard | Upload | Full access | Brand portal | Restricted',
);
export const FORMS = words('Basic | Photo | Video | Document | Rights');
