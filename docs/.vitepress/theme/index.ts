// The default theme, with the brand button darkened enough for white text (axe: color contrast).
import DefaultTheme from "vitepress/theme";
import "./custom.css";

export default DefaultTheme;
