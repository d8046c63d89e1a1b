// Every string the admin page shows, in one catalog: a translation is another catalog of the same
// keys (`lang` and `dir` come with it, for right-to-left scripts).

export const en = {
  lang: "en",
  dir: "ltr" as "ltr" | "rtl",
  signIn: "Sign in",
  signOut: "Sign out",
  signInIntro:
    "Sign in with the credentials your app gives you. The admin can do nothing the API would refuse you.",
  credentialKind: "Credential",
  apiKey: "API key",
  bearer: "Bearer token",
  session: "This browser's session (cookie)",
  secret: "Key or token",
  resources: "Resources",
  findResource: "Find a resource",
  nothingToList: "Your rules let you list no resource.",
  loading: "Loading…",
  search: "Search",
  filters: "Filters",
  field: "Field",
  operator: "Operator",
  value: "Value",
  addFilter: "Add filter",
  removeFilter: (text: string) => `Remove filter ${text}`,
  columns: "Columns",
  newRecord: (name: string) => `New ${name}`,
  previous: "Previous page",
  next: "Next page",
  about: (n: number) => `about ${n.toLocaleString()} rows`,
  exactly: (n: number) => `${n.toLocaleString()} rows`,
  noRows: "No rows match.",
  sortBy: (field: string) => `Sort by ${field}`,
  jumpTo: "Jump to value",
  jump: "Go",
  open: (id: string) => `Open ${id}`,
  save: "Save",
  create: "Create",
  saved: "Saved.",
  created: "Created.",
  deleteRecord: "Delete",
  confirmDelete: "Really delete? Press again to confirm.",
  deleted: "Deleted.",
  back: "Back to the list",
  readOnlyForm: "You may not change this record.",
  notAllowed: "Not allowed",
  changedMeanwhile:
    "Someone changed this record since you opened it. Your edits are still in the form; reload to see theirs.",
  reload: "Reload",
  history: "History",
  by: (user: string, source: string) => `by ${user} (${source})`,
  restore: "Restore this version",
  changedBySomeone: "Someone changed this record while you had it open. What you typed is kept.",
  deletedBySomeone: "Someone deleted this record while you had it open.",
  compare: "Compare with their version",
  conflictTitle: "Changed by someone else",
  conflictIntro:
    "Someone saved this record after you opened it. Choose, field by field, which value to keep.",
  original: "When you opened it",
  theirs: "Theirs",
  mine: "Yours",
  choice: "Choice",
  takeTheirs: "Take theirs",
  takeTheirsOf: (field: string) => `Take theirs for ${field}`,
  takeAllTheirs: "Take all of theirs",
  keepMine: "Keep mine",
  newRows: (n: number) => (n === 1 ? "1 new row: show" : `${n} new rows: show`),
  showRequest: "Show request",
  hideRequest: "Hide request",
  invalidJson: "Not valid JSON.",
  yes: "Yes",
  no: "No",
  unset: "(none)",
  theme: "Dark theme",
};

export type Strings = typeof en;

/** Arabic, written right to left: the page mirrors (dir="rtl"), its strings and numbers follow. */
const ar: Strings = {
  lang: "ar",
  dir: "rtl",
  signIn: "تسجيل الدخول",
  signOut: "تسجيل الخروج",
  signInIntro:
    "سجّل الدخول ببيانات الاعتماد التي يمنحك إياها تطبيقك. لا تستطيع لوحة الإدارة فعل أي شيء ترفضه الواجهة البرمجية.",
  credentialKind: "نوع بيانات الاعتماد",
  apiKey: "مفتاح API",
  bearer: "رمز Bearer",
  session: "جلسة هذا المتصفح (ملف تعريف الارتباط)",
  secret: "المفتاح أو الرمز",
  resources: "الموارد",
  findResource: "ابحث عن مورد",
  nothingToList: "لا تسمح لك قواعدك بعرض أي مورد.",
  loading: "جارٍ التحميل…",
  search: "بحث",
  filters: "عوامل التصفية",
  field: "الحقل",
  operator: "العامل",
  value: "القيمة",
  addFilter: "إضافة عامل تصفية",
  removeFilter: (text) => `إزالة عامل التصفية ${text}`,
  columns: "الأعمدة",
  newRecord: (name) => `${name} جديد`,
  previous: "الصفحة السابقة",
  next: "الصفحة التالية",
  about: (n) => `نحو ${n.toLocaleString("ar")} صف`,
  exactly: (n) => `${n.toLocaleString("ar")} صف`,
  noRows: "لا توجد صفوف مطابقة.",
  sortBy: (field) => `الترتيب حسب ${field}`,
  jumpTo: "الانتقال إلى قيمة",
  jump: "انتقال",
  open: (id) => `فتح ${id}`,
  save: "حفظ",
  create: "إنشاء",
  saved: "تم الحفظ.",
  created: "تم الإنشاء.",
  deleteRecord: "حذف",
  confirmDelete: "هل تريد الحذف فعلًا؟ اضغط مرة أخرى للتأكيد.",
  deleted: "تم الحذف.",
  back: "العودة إلى القائمة",
  readOnlyForm: "لا يمكنك تعديل هذا السجل.",
  notAllowed: "غير مسموح",
  changedMeanwhile: "غيّر شخص ما هذا السجل منذ أن فتحته. ما كتبته ما زال في النموذج.",
  reload: "إعادة التحميل",
  changedBySomeone: "غيّر شخص ما هذا السجل بينما كان مفتوحًا لديك. ما كتبته محفوظ.",
  deletedBySomeone: "حذف شخص ما هذا السجل بينما كان مفتوحًا لديك.",
  compare: "قارن مع نسختهم",
  conflictTitle: "غيّره شخص آخر",
  conflictIntro: "حفظ شخص ما هذا السجل بعد أن فتحته. اختر لكل حقل القيمة التي تريد إبقاءها.",
  original: "عندما فتحته",
  theirs: "نسختهم",
  mine: "نسختك",
  choice: "الاختيار",
  takeTheirs: "خذ نسختهم",
  takeTheirsOf: (field) => `خذ نسختهم للحقل ${field}`,
  takeAllTheirs: "خذ نسختهم كاملة",
  keepMine: "أبقِ نسختي",
  newRows: (n) => `${n.toLocaleString("ar")} صف جديد: عرض`,
  history: "السجل",
  by: (user, source) => `بواسطة ${user} (${source})`,
  restore: "استعادة هذه النسخة",
  showRequest: "عرض الطلب",
  hideRequest: "إخفاء الطلب",
  invalidJson: "ليس JSON صالحًا.",
  yes: "نعم",
  no: "لا",
  unset: "(لا شيء)",
  theme: "المظهر الداكن",
};

const CATALOGS: Readonly<Record<string, Strings>> = { en, ar };

/** The page's strings: chosen once, before the page renders (see `chooseCatalog`). */
export let t: Strings = en;

/** The catalog for the first of `languages` there is one for (`ar-EG` → `ar`), else English. */
export function chooseCatalog(languages: readonly string[]): Strings {
  for (const language of languages) {
    const found = CATALOGS[language] ?? CATALOGS[language.split("-")[0]!];
    if (found) {
      t = found;
      return found;
    }
  }
  t = en;
  return en;
}
