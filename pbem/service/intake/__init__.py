"""Intake: one mail from the inbox claimed, checked and handed to what it asks for."""
