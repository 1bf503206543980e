// sitedrop: marks the page as scripted (class "js" on <html>) before the
// body is drawn, so that CSS shows the controls that need JavaScript (the
// drop zone) at their place from the first paint instead of revealing
// them after load, which would push the page down. Loaded blocking in
// the <head> of every page (ui/layout.templ); tiny on purpose.
document.documentElement.classList.add("js");
