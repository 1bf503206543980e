package hooks

import (
	"context"
	"fmt"
	"net/mail"

	"github.com/pocketbase/pocketbase/core"
	"github.com/pocketbase/pocketbase/tools/mailer"

	"sitedrop/sites"
	"sitedrop/ui"
)

// sendLoginCode mails a sign-in code through PocketBase's mail settings
// (SMTP when configured in the dashboard).
func (sd *sitedrop) sendLoginCode(app core.App, to, code string) error {
	props := ui.LoginCodeMailProps{Code: code, Minutes: int(sites.LoginCodeTTL.Minutes()), WebURL: sd.webURL()}
	html, err := ui.RenderString(context.Background(), ui.LoginCodeMail(props))
	if err != nil {
		return fmt.Errorf("render login mail: %w", err)
	}
	meta := app.Settings().Meta
	msg := &mailer.Message{
		From:    mail.Address{Name: meta.SenderName, Address: meta.SenderAddress},
		To:      []mail.Address{{Address: to}},
		Subject: ui.LoginCodeMailSubject,
		HTML:    html,
		Text:    ui.LoginCodeText(props),
	}
	if err := app.NewMailClient().Send(msg); err != nil {
		return fmt.Errorf("send login code mail: %w", err)
	}
	return nil
}
